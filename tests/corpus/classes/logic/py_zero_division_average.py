# Average order value of a day with no orders.
orders = []
print("average", sum(orders) / len(orders))
