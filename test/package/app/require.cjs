// A CommonJS user: require() of the package's ES modules (Node >= 20.19 and >= 22.12 load them synchronously).
const { createOutbox, pgliteDb, kafkaTransport } = require('effectively');

console.log(`require: ${[createOutbox, pgliteDb, kafkaTransport].map((value) => typeof value).join(' ')}`);
