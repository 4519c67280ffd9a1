import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { describe, expect, it } from 'vitest';
import { restoreMapFields } from './map-fields.js';

describe('restoreMapFields', () => {
  it('restores map fields and leaves no map_entry option on the message that declares one', () => {
    const parsed = protobuf.parse(
      `syntax = "proto3"; package t;
       message Meta { map<string, int32> counts = 1; }
       message Doc { Meta meta = 1; repeated Meta metas = 2; map<string, string> labels = 3; }`,
    ).root;
    const set = (parsed as unknown as { toDescriptor(s: string): protobuf.Message }).toDescriptor(
      'proto3',
    );
    const root = (
      protobuf.Root as unknown as { fromDescriptor(s: protobuf.Message): protobuf.Root }
    ).fromDescriptor(
      descriptor.FileDescriptorSet.decode(descriptor.FileDescriptorSet.encode(set).finish()),
    );
    restoreMapFields(root);
    root.resolveAll();
    const meta = root.lookupType('t.Meta');
    const doc = root.lookupType('t.Doc');
    expect(meta.options?.['map_entry']).toBeUndefined();
    expect(doc.options?.['map_entry']).toBeUndefined();
    expect(meta.fields['counts']).toBeInstanceOf(protobuf.MapField);
    expect(doc.fields['labels']).toBeInstanceOf(protobuf.MapField);
    expect(meta.nested?.['CountsEntry']).toBeUndefined();
  });
});
