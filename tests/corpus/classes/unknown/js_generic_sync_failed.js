console.log("starting sync");
console.error("sync failed");
process.exit(1);
