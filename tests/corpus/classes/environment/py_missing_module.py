import requests_oauthlib_healer_corpus
print("fetching")
