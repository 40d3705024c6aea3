def resolution_result(server_args, field, default=None):
    return server_args._resolved.get(field, getattr(server_args, field, default))
