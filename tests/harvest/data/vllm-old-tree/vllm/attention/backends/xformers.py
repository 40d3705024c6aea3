class XFormersBackend: pass
