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
