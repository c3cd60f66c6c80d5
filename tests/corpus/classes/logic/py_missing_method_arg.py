def send(report, recipient):
    print("sending", report, "to", recipient)

send("daily.pdf")
