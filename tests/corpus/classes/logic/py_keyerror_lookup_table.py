RATES = {"EUR": 1.0, "USD": 1.08, "GBP": 0.86}
invoices = [("inv-1", "EUR", 100), ("inv-2", "CHF", 70)]
for number, currency, amount in invoices:
    print(number, round(amount / RATES[currency], 2))
