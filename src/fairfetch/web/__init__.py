"""fairfetch.web"""
