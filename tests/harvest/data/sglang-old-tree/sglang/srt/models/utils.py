# a helper module without EntryClass registers nothing
def helper():
    return None
