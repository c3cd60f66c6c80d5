# Amounts come with a currency sign now.
amounts = ["12", "7", "€15"]
print(sum(int(a) for a in amounts))
