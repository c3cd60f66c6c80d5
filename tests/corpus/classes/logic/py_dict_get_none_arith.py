prices = {"apple": 1.2}
total = prices.get("pear") * 3
print(total)
