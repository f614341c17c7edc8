"""fairfetch.websub"""
