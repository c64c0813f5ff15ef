// Logical backup and restore of the database (the admin CLI's `backup` and `restore`, docs/operations.md).
export {
  dumpDatabase,
  backedUpTables,
  TRANSIENT_TABLES,
  SECRET_TABLES,
  type DatabaseDump,
  type DumpedTable,
  type DumpedSequence,
} from "./dump.ts";
export { restoreDatabase, migrationsFor, verifyDumpFiles, type RestoredDatabase } from "./restore.ts";
export { BackupError, loadOrder, type ForeignKey } from "./table-order.ts";
export { fileSha256, tap } from "./files.ts";
