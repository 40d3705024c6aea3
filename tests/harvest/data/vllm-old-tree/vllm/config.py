CacheDType = Literal["auto", "fp8", "fp8_e5m2"]
