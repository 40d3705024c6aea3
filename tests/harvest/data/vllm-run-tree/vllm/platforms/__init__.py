current_platform = None  # vLLM infers it; with no GPU it fails ("Failed to infer device type")
