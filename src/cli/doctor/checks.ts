import { checkBackup } from './backup.js';
import type { Check, Context } from './check.js';
import { checkConfig } from './config.js';
import { checkDatabase } from './database.js';
import { checkDisk, checkModes } from './home.js';
import { checkModels } from './models.js';
import { checkAddress } from './network.js';
import { checkProcess } from './process.js';
import { checkNode, checkRelease } from './runtime.js';
import { checkSandbox } from './sandbox.js';
import { checkService } from './service.js';

/**
 * Every `svc doctor` check, in the order it prints them. The slow ones (they run programs or
 * reach the network) run together first; the quick local ones after.
 */
export async function allChecks(ctx: Context): Promise<Check[]> {
  const [sandbox, models, address, service] = await Promise.all([
    checkSandbox(),
    checkModels(ctx),
    checkAddress(ctx),
    checkService(ctx),
  ]);
  return [
    checkNode(ctx),
    sandbox,
    checkProcess(ctx),
    ...checkModes(ctx),
    checkDisk(ctx),
    checkDatabase(ctx),
    checkBackup(ctx),
    ...checkConfig(ctx),
    ...models,
    ...address,
    ...service,
    checkRelease(ctx),
  ];
}
