# European decimal commas in the new export.
amount = float("12,50")
print(amount * 2)
