const dns = require("dns").promises;
dns.lookup("db.healer-corpus.invalid").then((a) => console.log(a));
