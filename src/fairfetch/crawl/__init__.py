"""fairfetch.crawl"""
