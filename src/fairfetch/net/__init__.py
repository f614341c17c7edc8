"""fairfetch.net"""
