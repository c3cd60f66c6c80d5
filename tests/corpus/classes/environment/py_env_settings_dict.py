import os

def settings():
    return {key: value for key, value in os.environ.items() if key.startswith("SHOP_")}

config = settings()
print("connecting with", config["SHOP_API_TOKEN"][:4])
