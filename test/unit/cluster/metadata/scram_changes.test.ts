// AlterUserScramCredentials as the controller applies it (KIP-554's rules): one result per user,
// all of a user's alterations or none, typed refusals; and a credential written from a salted
// password authenticates a SCRAM client against the image that applied it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyRecords } from '../../../../src/cluster/metadata/delta.js';
import { MetadataImage, scramKey } from '../../../../src/cluster/metadata/image.js';
import { scramChanges, type ScramUpsertionRequest } from '../../../../src/cluster/metadata/scram_changes.js';
import { saltedPassword, ScramServer, type ScramMechanism } from '../../../../src/common/sasl_mechanisms.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { ScramClient } from '../../../../src/common/scram_client.js';

const AT = { endOffset: 1, epoch: 1 };
const CODES: Record<ScramMechanism, number> = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 };

function upsert(name: string, mechanism: ScramMechanism, password: string, iterations = 4096): ScramUpsertionRequest {
  const salt = Buffer.from(`salt-${name}`);
  return { name, mechanism: CODES[mechanism], iterations, salt, saltedPassword: saltedPassword(mechanism, password, salt, iterations) };
}

function authenticates(image: MetadataImage, mechanism: ScramMechanism, user: string, password: string): boolean {
  const server = new ScramServer(mechanism, (u) => image.scram.get(scramKey(mechanism, u)));
  const client = new ScramClient(mechanism, user, password, 'nonce');
  try {
    const serverFirst = server.step(Buffer.from(client.first())).token.toString();
    return server.step(Buffer.from(client.final(serverFirst))).done;
  } catch {
    return false;
  }
}

describe('scramChanges', () => {
  it('writes StoredKey and ServerKey (not the salted password) that authenticate the password', () => {
    const { records, results } = scramChanges(MetadataImage.EMPTY, { deletions: [], upsertions: [upsert('alice', 'SCRAM-SHA-512', 'pw')] });
    assert.deepEqual(results, [{ user: 'alice', errorCode: ErrorCode.NONE, message: null }]);
    const image = applyRecords(MetadataImage.EMPTY, records, AT);
    assert.ok(authenticates(image, 'SCRAM-SHA-512', 'alice', 'pw'));
    assert.ok(!authenticates(image, 'SCRAM-SHA-512', 'alice', 'other'));
    assert.ok(!authenticates(image, 'SCRAM-SHA-256', 'alice', 'pw'), 'a credential holds for its own mechanism only');
    assert.ok(!JSON.stringify(records).includes(upsert('alice', 'SCRAM-SHA-512', 'pw').saltedPassword.toString('hex')));
  });

  it('deletes, and refuses what cannot apply, per user and all-or-nothing', () => {
    const first = scramChanges(MetadataImage.EMPTY, { deletions: [], upsertions: [upsert('alice', 'SCRAM-SHA-256', 'pw'), upsert('bob', 'SCRAM-SHA-256', 'pw')] });
    const image = applyRecords(MetadataImage.EMPTY, first.records, AT);
    const { records, results } = scramChanges(image, {
      deletions: [{ name: 'alice', mechanism: 1 }, { name: 'carol', mechanism: 1 }, { name: 'bob', mechanism: 1 }],
      upsertions: [
        upsert('bob', 'SCRAM-SHA-256', 'again'), { ...upsert('dave', 'SCRAM-SHA-256', 'pw'), iterations: 100 }, { ...upsert('erin', 'SCRAM-SHA-256', 'pw'), mechanism: 3 },
        upsert('', 'SCRAM-SHA-256', 'pw'), { ...upsert('frank', 'SCRAM-SHA-512', 'pw'), saltedPassword: Buffer.alloc(5) },
      ],
    });
    assert.deepEqual(results.map((r) => [r.user, r.errorCode]), [
      ['alice', ErrorCode.NONE], ['carol', ErrorCode.RESOURCE_NOT_FOUND], ['bob', ErrorCode.DUPLICATE_RESOURCE],
      ['dave', ErrorCode.UNACCEPTABLE_CREDENTIAL], ['erin', ErrorCode.UNSUPPORTED_SASL_MECHANISM], ['', ErrorCode.UNACCEPTABLE_CREDENTIAL],
      ['frank', ErrorCode.UNACCEPTABLE_CREDENTIAL],
    ]);
    const after = applyRecords(image, records, { endOffset: 2, epoch: 1 });
    assert.equal(after.scram.get(scramKey('SCRAM-SHA-256', 'alice')), undefined);
    assert.ok(authenticates(after, 'SCRAM-SHA-256', 'bob', 'pw'), 'bob\'s refused alterations left his credential as it was');
    assert.equal(after.scram.size, 1);
  });
});
