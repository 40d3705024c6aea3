import logging

logger = logging.getLogger(__name__)


def handle_deprecated_args(server_args):
    if server_args.grpc_mode and not server_args.smg_grpc_mode:
        logger.warning(
            "--grpc-mode is deprecated and will be removed in a future version. "
            "Use --smg-grpc-mode for the legacy server, or --grpc-port for the native one."
        )
    if server_args.attention_backend == "compressed":
        logger.warning(f"--attention-backend={server_args.attention_backend} is deprecated; use 'dsv4' instead.")
