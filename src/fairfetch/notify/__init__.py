"""fairfetch.notify"""
