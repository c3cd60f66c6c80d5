const { WebClient } = require("@slack-healer-corpus/web-api");
console.log(new WebClient());
