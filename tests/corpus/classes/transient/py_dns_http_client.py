import http.client
conn = http.client.HTTPSConnection("api.healer-corpus.invalid", timeout=5)
conn.request("GET", "/v1/status")
print(conn.getresponse().status)
