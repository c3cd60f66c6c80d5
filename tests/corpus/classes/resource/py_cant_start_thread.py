import resource, threading
resource.setrlimit(resource.RLIMIT_AS, (120 * 2**20, 120 * 2**20))
workers = []
for n in range(500):
    t = threading.Thread(target=lambda: __import__("time").sleep(5), daemon=True)
    t.start()
    workers.append(t)
