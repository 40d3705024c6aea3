class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--kv-cache-dtype", type=str, default="auto", choices=["auto", "fp8_e5m2", "fp8_e4m3"])
        parser.add_argument("--attention-backend", type=str, choices=["flashinfer", "triton", "fa3"])
