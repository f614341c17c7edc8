"""fairfetch.audit"""
