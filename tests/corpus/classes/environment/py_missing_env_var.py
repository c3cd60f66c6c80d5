import os
token = os.environ["SHOP_API_TOKEN"]
print("calling the shop with", token[:4])
