class XFormersBackend:  # the V0 engine's fallback backend, as 0.7.x
    @staticmethod
    def get_name():
        return "XFORMERS"
