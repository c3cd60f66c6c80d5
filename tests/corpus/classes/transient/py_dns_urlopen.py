import urllib.request
with urllib.request.urlopen("http://rates.healer-corpus.invalid/v1/today", timeout=5) as r:
    print(r.read())
