// A minimal RFC 3161 timestamp authority on loopback for the B-T tests: reads a TimeStampReq,
// answers a granted TimeStampResp whose token is a CMS SignedData over a TSTInfo (message
// imprint and nonce echoed, genTime now), signed by a TSA certificate (extKeyUsage
// timeStamping) with the ESS signing-certificate-v2 attribute, as RFC 3161/5816 require.
import { createHash, createSign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import type { Pki } from './pki.js';

const { asn1 } = forge;
const T = asn1.Type;
const U = asn1.Class.UNIVERSAL;
const C = asn1.Class.CONTEXT_SPECIFIC;
const seq = (value: forge.asn1.Asn1[]) => asn1.create(U, T.SEQUENCE, true, value);
const set = (value: forge.asn1.Asn1[]) => asn1.create(U, T.SET, true, value);
const oid = (id: string) => asn1.create(U, T.OID, false, asn1.oidToDer(id).getBytes());
const int = (n: number) => asn1.create(U, T.INTEGER, false, asn1.integerToDer(n).getBytes());
const octets = (bytes: Buffer) => asn1.create(U, T.OCTETSTRING, false, bytes.toString('binary'));
const der = (node: forge.asn1.Asn1) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
const SHA256 = '2.16.840.1.101.3.4.2.1';
const TSTINFO = '1.2.840.113549.1.9.16.1.4';

export interface Tsa {
  url: string;
  /** Requests answered. */
  served: number;
  close(): Promise<void>;
}

export async function startTsa(tsa: Pki, chain: Pki[] = []): Promise<Tsa> {
  const state = { served: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = timestampReply(Buffer.concat(chunks), tsa, chain);
        state.served++;
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(body);
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tsr`,
    get served() {
      return state.served;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function timestampReply(request: Buffer, tsa: Pki, chain: Pki[]): Buffer {
  const req = asn1.fromDer(request.toString('binary'));
  const parts = req.value as forge.asn1.Asn1[];
  const imprint = parts[1]!;
  const nonce = parts.find((p, i) => i > 1 && p.type === T.INTEGER);
  const genTime = asn1.create(U, T.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(new Date()));
  const tstInfo = der(seq([int(1), oid('1.3.6.1.4.1.99999.1'), imprint, int(Math.floor(Math.random() * 1e9)), genTime, ...(nonce ? [nonce] : [])]));
  const certDer = der(forge.pki.certificateToAsn1(tsa.cert));
  const tbs = (asn1.fromDer(certDer.toString('binary')).value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
  const [serialNode, issuerNode] = [tbs[1]!, tbs[3]!];
  const attrs = [
    seq([oid('1.2.840.113549.1.9.3'), set([oid(TSTINFO)])]),
    seq([oid('1.2.840.113549.1.9.4'), set([octets(createHash('sha256').update(tstInfo).digest())])]),
    seq([oid('1.2.840.113549.1.9.16.2.47'), set([seq([seq([seq([octets(createHash('sha256').update(certDer).digest())])])])])]),
  ];
  const signedAttrs = der(set(attrs));
  const signature = createSign('sha256').update(signedAttrs).sign(forge.pki.privateKeyToPem(tsa.key));
  const signerInfo = seq([
    int(1),
    seq([issuerNode, serialNode]),
    seq([oid(SHA256)]),
    asn1.create(C, 0, true, attrs),
    seq([oid('1.2.840.113549.1.1.11'), asn1.create(U, T.NULL, false, '')]),
    octets(signature),
  ]);
  const certs = [tsa, ...chain].map((p) => forge.pki.certificateToAsn1(p.cert));
  const signedData = seq([
    int(3),
    set([seq([oid(SHA256)])]),
    seq([oid(TSTINFO), asn1.create(C, 0, true, [octets(tstInfo)])]),
    asn1.create(C, 0, true, certs),
    set([signerInfo]),
  ]);
  const token = seq([oid('1.2.840.113549.1.7.2'), asn1.create(C, 0, true, [signedData])]);
  return der(seq([seq([int(0)]), token]));
}
