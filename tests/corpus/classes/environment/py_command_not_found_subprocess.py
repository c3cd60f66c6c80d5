import subprocess
subprocess.run(["pdftotext-healer-corpus", "invoice.pdf", "-"], check=True)
