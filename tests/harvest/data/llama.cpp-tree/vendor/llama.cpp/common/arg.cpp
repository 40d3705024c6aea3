// Shape of llama.cpp's common/arg.cpp: every option is a common_arg with its spellings.
    add_opt(common_arg(
        {"-m", "--model"}, "FNAME",
        "model path",
        [](common_params & params, const std::string & value) { params.model.path = value; }
    ));
    add_opt(common_arg(
        {"-ngl", "--gpu-layers", "--n-gpu-layers"}, "N",
        "max. number of layers to store in VRAM",
        [](common_params & params, int value) { params.n_gpu_layers = value; }
    ).set_env("LLAMA_ARG_N_GPU_LAYERS"));
    add_opt(common_arg(
        {"--mmap"},
        {"--no-mmap"},
        "DEPRECATED in favor of `--load-mode`: map the model file",
        [](common_params & params, bool value) {
            LOG_WRN("DEPRECATED: --mmap and --no-mmap are deprecated. use --load-mode mmap instead\n");
            params.load_mode = value ? LOAD_MODE_MMAP : LOAD_MODE_NONE;
        }
    ));
    add_opt(common_arg(
        {"--mlock"},
        "DEPRECATED in favor of `--load-mode`: keep the model resident",
        [](common_params & params) {
            LOG_WRN("DEPRECATED: --mlock is deprecated. use --load-mode mlock instead\n");
            params.load_mode = LOAD_MODE_MLOCK;
        }
    ));
    add_opt(common_arg(
        {"-lm", "--load-mode"}, "MODE",
        "how the model is loaded",
        [](common_params & params, const std::string & value) {
            /**/ if (value == "none")  { params.load_mode = LOAD_MODE_NONE;  }
            else if (value == "mmap")  { params.load_mode = LOAD_MODE_MMAP;  }
            else if (value == "mlock") { params.load_mode = LOAD_MODE_MLOCK; }
        }
    ));
    add_opt(common_arg(
        {"--draft", "--draft-max"}, "N",
        "removed",
        [](common_params & params, int value) {
            arg_removed("use --spec-draft-n-max");
        }
    ));
