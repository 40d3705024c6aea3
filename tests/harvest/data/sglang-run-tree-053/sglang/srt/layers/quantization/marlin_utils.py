def query_marlin_supported_quant_types(has_zp=None, include_fp_type=True, device_capability=None):
    if device_capability < 80:
        return []
    return ["uint4b8", "uint8b128", "float8_e4m3fn", "float4_e2m1f", "uint4"]
