console.log("processed 40 of 40 records");
process.exitCode = 2;
