"""fairfetch.store"""
