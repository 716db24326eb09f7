// Signatures (issue 40, docs/pdf-output.md#signatures): stored identities of an account
// (paid plans) and the signing step of a compile. `prepare` runs before the quota is reserved:
// it checks output.sign, opens the PKCS#12 (inline or stored) and returns the step the compile
// runs on its final PDF, in this process, after the sandboxed output step; the key never
// enters a sandbox, a job, the result cache or a log. Every refusal costs nothing.
import type { Logger } from 'pino';
import { requirePaidPlan, tierOf, type Caller } from '../accounts/caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { errors, validationFailed, type FieldError } from '../errors.js';
import { links } from '../links.js';
import { decodeP12, openIdentity, type OpenedIdentity } from './identity.js';
import type { CreateIdentity, IdentityInfo, SignRequest } from './schema.js';
import type { Sealer } from './seal.js';
import { SigningFailed, signPdf, type SignFields } from './signer.js';
import type { IdentityStore } from './store.js';
import type { TsaSettings } from './tsa.js';

/** Signs the compile's final PDF; throws a ServiceError (timestamp_failed, output_failed). */
export type SignStep = (pdf: Buffer) => Promise<Buffer>;

const TSA_TIMEOUT_MS = 10_000;

export class SigningService {
  constructor(
    private readonly store: IdentityStore,
    private readonly sealer: Sealer,
    private readonly config: Pick<Config, 'baseUrl' | 'tsaUrl' | 'tsaAllowPrivate'>,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  private paid(caller: Caller) {
    return requirePaidPlan(caller, 'Stored signing identities', links(this.config).upgradeUrl);
  }

  async create(caller: Caller, body: CreateIdentity): Promise<IdentityInfo> {
    const owner = this.paid(caller);
    const p12 = decodeP12(body.p12_base64, 'p12_base64');
    const { facts } = await openIdentity(p12, body.password, 'p12_base64', this.clock.now());
    const sealed = this.sealer.seal({ p12, password: body.password }, owner.account.id, body.name.toLowerCase());
    const created_at = this.clock.now().toISOString();
    if (!(await this.store.insert(owner.account.id, body.name, facts, sealed, created_at))) {
      throw errors.signing_identity_exists(`A signing identity named "${body.name}" already exists in this account; delete it first.`, { identity: body.name });
    }
    this.log.info({ account: owner.account.id, identity: body.name, fingerprint: facts.fingerprint_sha256 }, 'signing identity stored');
    return { name: body.name, ...facts, created_at };
  }

  async list(caller: Caller): Promise<IdentityInfo[]> {
    return this.store.list(this.paid(caller).account.id);
  }

  async remove(caller: Caller, name: string): Promise<void> {
    const owner = this.paid(caller);
    if (!(await this.store.remove(owner.account.id, name))) throw notFound(name);
  }

  /** The signing step `output.sign` asks for, or undefined without one. Nothing is charged for a refusal. */
  async prepare(caller: Caller, output: unknown): Promise<SignStep | undefined> {
    const request = (output as { sign?: SignRequest; encrypt?: unknown; linearize?: unknown } | null | undefined)?.sign;
    if (!request) return undefined;
    const all = output as { encrypt?: unknown; linearize?: unknown };
    const fields: FieldError[] = [];
    const field = (name: string, rule: string, message: string) => fields.push({ field: name, rule, message });
    // Refused rather than signed after encrypting: the signer would need the document's password, and a reader verifies the decrypted bytes.
    if (all.encrypt) field('output.sign', 'conflict', 'cannot be combined with output.encrypt: sign, or encrypt, not both');
    // A signature is an incremental update, which ends the linearization (the file would claim fast web view and not have it).
    if (all.linearize) field('output.sign', 'conflict', 'cannot be combined with output.linearize: the signature is an incremental update, which breaks linearization');
    if ((request.p12_base64 === undefined) === (request.identity === undefined)) field('output.sign', 'one_of', 'must have exactly one of p12_base64 and identity');
    if (request.identity !== undefined && request.password !== undefined) field('output.sign.password', 'conflict', 'a stored identity has its password already');
    if (fields.length > 0) throw validationFailed(fields);
    if (request.timestamp && !this.config.tsaUrl) {
      throw errors.timestamp_not_configured('This server has no timestamp authority (the operator sets QUIRE_TSA_URL); send output.sign without timestamp.');
    }
    const identity = request.identity !== undefined ? await this.stored(caller, request.identity) : await this.inline(request);
    const signFields: SignFields = {
      ...(request.reason ? { reason: request.reason } : {}),
      ...(request.location ? { location: request.location } : {}),
      ...(request.contact_info ? { contactInfo: request.contact_info } : {}),
    };
    const tsa: TsaSettings | undefined = request.timestamp ? { url: this.config.tsaUrl!, allowPrivate: this.config.tsaAllowPrivate, timeoutMs: TSA_TIMEOUT_MS } : undefined;
    const plan = tierOf(caller);
    return async (pdf) => {
      const started = performance.now();
      const signed = await signPdf(pdf, identity.signer, signFields, tsa, this.clock.now()).catch((err: unknown) => {
        if (!(err instanceof SigningFailed)) throw err;
        throw errors.output_failed(`The output step could not sign the PDF: ${err.message}`, { reasons: [err.message], plan, retryable: false });
      });
      this.log.debug({ ms: Math.round(performance.now() - started), timestamp: tsa !== undefined, fingerprint: identity.facts.fingerprint_sha256 }, 'pdf signed');
      return signed;
    };
  }

  private inline(request: SignRequest): Promise<OpenedIdentity> {
    const p12 = decodeP12(request.p12_base64!, 'output.sign.p12_base64');
    return openIdentity(p12, request.password ?? '', 'output.sign.p12_base64', this.clock.now());
  }

  private async stored(caller: Caller, name: string): Promise<OpenedIdentity> {
    const owner = this.paid(caller);
    const row = await this.store.sealed(owner.account.id, name);
    if (!row) throw notFound(name);
    const secret = this.sealer.open(row.sealed, owner.account.id, row.name_lower);
    if (!secret) {
      // Another server secret (or a tampered row): the identity must be uploaded again.
      this.log.warn({ account: owner.account.id, identity: row.name }, 'stored signing identity does not open with this server secret');
      throw errors.invalid_pkcs12(`The stored identity "${row.name}" cannot be opened with this server's secret; delete it and upload it again.`, { field: 'output.sign.identity', reason: 'sealed' });
    }
    return openIdentity(secret.p12, secret.password, 'output.sign.identity', this.clock.now());
  }
}

function notFound(name: string) {
  return errors.signing_identity_not_found(`No signing identity named "${name}" in this account (GET /api/v1/signing-identities lists them).`, { identity: name });
}
