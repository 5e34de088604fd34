import { ConfigError, loadConfig } from './config.js';
import { startServer } from './server.js';

try {
  await startServer(loadConfig(process.env));
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
