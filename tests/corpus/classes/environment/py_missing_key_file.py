import ssl
context = ssl.create_default_context()
context.load_cert_chain("certs/client.pem", "certs/client.key")
print("loaded")
