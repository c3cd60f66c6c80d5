console.log("processing 2 million rows");
process.kill(process.pid, "SIGKILL");
