import { createRequire } from 'node:module';
import path from 'node:path';
import type {
  Server,
  ServerDuplexStream,
  ServiceDefinition,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { status } from '@svcboot/grpc-typed/internal/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { DescriptorPool, PoolFile } from './descriptor-pool.js';
import { fileDescriptorsOf } from './proto-file-descriptors.js';
import { loadProtoRoot } from '@svcboot/openapi/internal/api/protos';

const require = createRequire(import.meta.url);

/** The two versions of the reflection service clients use: v1 (grpcurl, buf curl) and v1alpha. */
const VERSIONS = ['grpc.reflection.v1', 'grpc.reflection.v1alpha'] as const;

/** grpc/reflection/v{1,1alpha}/reflection.proto as @grpc/reflection ships them. */
function protoDir(): string {
  return path.join(
    path.dirname(require.resolve('@grpc/reflection/package.json')),
    'build',
    'proto',
  );
}

function protoFile(version: (typeof VERSIONS)[number]): string {
  return `grpc/reflection/${version.slice('grpc.reflection.'.length)}/reflection.proto`;
}

/** ServerReflectionRequest as proto-loader decodes it (camelCase, `oneofs: true`). */
interface ReflectionRequest {
  host?: string;
  messageRequest?:
    | 'fileByFilename'
    | 'fileContainingSymbol'
    | 'fileContainingExtension'
    | 'allExtensionNumbersOfType'
    | 'listServices';
  fileByFilename?: string;
  fileContainingSymbol?: string;
  fileContainingExtension?: { containingType?: string; extensionNumber?: number };
  allExtensionNumbersOfType?: string;
  listServices?: string;
}

type ReflectionResponse = Record<string, unknown>;

class NotFound extends Error {}

/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) over the entry's DescriptorPool: the
 * files protoc would have produced, with their real names and every import, so grpcurl and
 * buf curl can list, describe and call every method. Files already sent on a stream are not sent
 * again on it (the client keeps them), as grpc-go does.
 */
export class ServerReflection {
  constructor(
    private readonly pool: DescriptorPool,
    /** The services the server serves (listed by list_services). */
    private readonly serviceNames: () => readonly string[],
  ) {
    const dir = protoDir();
    const root = loadProtoRoot(VERSIONS.map(protoFile), [dir], dir);
    for (const f of fileDescriptorsOf(root, [dir], dir)) pool.addProto(f, '@grpc/reflection');
  }

  /** Adds both versions of the service to `server`. */
  addToServer(server: Server): void {
    for (const { definition, implementation } of this.services())
      server.addService(definition, implementation);
  }

  /** Both versions of the service, as definitions and handlers (for grpc-js or the invoker). */
  services(): Array<{
    definition: ServiceDefinition;
    implementation: UntypedServiceImplementation;
  }> {
    const dir = protoDir();
    const out: Array<{
      definition: ServiceDefinition;
      implementation: UntypedServiceImplementation;
    }> = [];
    for (const version of VERSIONS) {
      const pkg = loadSync(protoFile(version), {
        includeDirs: [dir],
        longs: String,
        enums: String,
        defaults: false,
        oneofs: true,
      });
      const definition = pkg[`${version}.ServerReflection`] as ServiceDefinition;
      out.push({
        definition,
        implementation: {
          ServerReflectionInfo: (call: ServerDuplexStream<ReflectionRequest, ReflectionResponse>) =>
            this.serve(call),
        },
      });
    }
    return out;
  }

  /** The services a list_services request names (the server's, then reflection itself). */
  listed(): string[] {
    return [...new Set([...this.serviceNames(), ...VERSIONS.map((v) => `${v}.ServerReflection`)])];
  }

  private serve(call: ServerDuplexStream<ReflectionRequest, ReflectionResponse>): void {
    const sent = new Set<string>();
    call.on('data', (request: ReflectionRequest) => {
      call.write(this.answer(request, sent));
    });
    call.on('end', () => call.end());
    call.on('error', () => {});
  }

  /** One response; `sent`: the files this stream already carried. @internal */
  answer(request: ReflectionRequest, sent: Set<string>): ReflectionResponse {
    const response: ReflectionResponse = {
      validHost: request.host ?? '',
      originalRequest: request,
    };
    try {
      switch (request.messageRequest) {
        case 'listServices':
          response['listServicesResponse'] = {
            service: this.listed().map((name) => ({ name })),
          };
          break;
        case 'fileByFilename': {
          const name = request.fileByFilename ?? '';
          const file = this.pool.file(name);
          if (!file) throw new NotFound(`no file named ${name}`);
          response['fileDescriptorResponse'] = this.withImports(file, sent);
          break;
        }
        case 'fileContainingSymbol': {
          const symbol = request.fileContainingSymbol ?? '';
          const file = this.pool.fileOfSymbol(symbol);
          if (!file) throw new NotFound(`no symbol named ${symbol}`);
          response['fileDescriptorResponse'] = this.withImports(file, sent);
          break;
        }
        case 'fileContainingExtension': {
          const type = request.fileContainingExtension?.containingType ?? '';
          const number = request.fileContainingExtension?.extensionNumber ?? 0;
          const file = this.pool.fileOfExtension(type, number);
          if (!file) throw new NotFound(`no extension ${number} of ${type}`);
          response['fileDescriptorResponse'] = this.withImports(file, sent);
          break;
        }
        case 'allExtensionNumbersOfType': {
          const type = request.allExtensionNumbersOfType ?? '';
          const numbers = this.pool.extensionNumbers(type);
          if (!numbers) throw new NotFound(`no type named ${type}`);
          response['allExtensionNumbersResponse'] = {
            baseTypeName: type,
            extensionNumber: numbers,
          };
          break;
        }
        default:
          response['errorResponse'] = {
            errorCode: status.UNIMPLEMENTED,
            errorMessage: 'the request names no known reflection question',
          };
      }
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      response['errorResponse'] = { errorCode: status.NOT_FOUND, errorMessage: err.message };
    }
    return response;
  }

  /** The file and the files it imports, transitively, less those this stream already sent. */
  private withImports(file: PoolFile, sent: Set<string>): { fileDescriptorProto: Buffer[] } {
    const out: Buffer[] = [];
    for (const f of this.pool.closure(file.name)) {
      if (f !== file && sent.has(f.name)) continue;
      sent.add(f.name);
      out.push(Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength));
    }
    return { fileDescriptorProto: out };
  }
}
