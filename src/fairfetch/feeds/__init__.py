"""fairfetch.feeds"""
