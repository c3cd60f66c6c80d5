import re
# The order id pattern no longer matches the new format, and the script assumes it does.
match = re.search(r"ORD-(\d+)", "order 2024/00017")
print("order", match.group(1))
