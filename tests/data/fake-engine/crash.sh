# Entrypoint of the crashing image: a known vLLM failure fingerprint, then exit 1.
echo "INFO fake engine: loading weights"
echo "ERROR [core.py:708] EngineCore failed to start."
echo "ValueError: No valid attention backend found for cuda with head_size: 576, use_mla: True, use_sparse: True"
exit 1
