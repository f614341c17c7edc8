"""fairfetch.testbed"""
