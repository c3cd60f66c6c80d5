import { parse } from "csv-parse-healer-corpus/sync";
console.log(parse("a,b"));
