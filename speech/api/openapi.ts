// The OpenAPI 3.1 document of the gateway, written by hand next to the routes; a test keeps the two in sync.
import { listOutputFormats } from '../audio/formats.js';
import { DEFAULT_MODEL_ID, DIALOGUE_MODELS, SYNTHESIS_MODELS } from '../models/index.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../voices/index.js';
import { CURRENT_API_VERSION } from './request-context.js';
import { allErrorCodes } from './speech-error.js';
import { INPUT_LIMITS } from './speech-request.js';

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type OpenApiDocument = { readonly [key: string]: Json };

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const errorRef = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

const COMMON_HEADERS: Json = {
  'X-Request-ID': { $ref: '#/components/headers/X-Request-ID' },
  'Tts-Version': { $ref: '#/components/headers/Tts-Version' },
};

const COMMON_PARAMETERS: Json = [
  { $ref: '#/components/parameters/TtsVersion' },
  { $ref: '#/components/parameters/XRequestId' },
];

function json(schema: Json, description: string): Json {
  return { description, headers: COMMON_HEADERS, content: { 'application/json': { schema } } };
}

function synthesisBody(route: 'speech' | 'stream' | 'stream-with-timestamps'): Json {
  return {
    required: true,
    content: {
      'application/json': {
        schema: {
          allOf: [ref('SpeechRequest'), { properties: { input: { maxLength: INPUT_LIMITS[route] } } }],
        },
      },
    },
  };
}

const SYNTHESIS_ERRORS: Json = {
  '400': errorRef('BadRequest'),
  '401': errorRef('Unauthenticated'),
  '403': errorRef('Forbidden'),
  '404': errorRef('NotFound'),
  '413': errorRef('PayloadTooLarge'),
  '415': errorRef('UnsupportedMediaType'),
  '503': errorRef('EngineUnavailable'),
};

const ACCEPT_PARAMETER: Json = {
  name: 'Accept',
  in: 'header',
  required: false,
  description:
    'Selects the audio when output_format and audio_format are absent: audio/mpeg, audio/ogg, audio/aac, audio/flac, ' +
    'audio/pcm (answered as audio/L16; rate=24000; channels=1), audio/basic (µ-law 8 kHz). Missing or */* → route default.',
  schema: { type: 'string' },
};

const WORD_MARK: Json = {
  type: 'object',
  required: ['type', 'value', 'start', 'end', 'start_time', 'end_time'],
  properties: {
    type: { const: 'word' },
    value: { type: 'string', description: 'The word as written (entities decoded).' },
    start: { type: 'integer', description: 'Code-point offset into the input as sent (SSML included), inclusive.' },
    end: { type: 'integer', description: 'Code-point offset, exclusive.' },
    start_time: { type: 'integer', description: 'Milliseconds from the start of the synthesis.' },
    end_time: { type: 'integer', description: 'Milliseconds from the start of the synthesis.' },
  },
};

const MARK_NODE: Json = {
  type: 'object',
  required: ['type', 'value', 'start', 'end', 'start_time', 'end_time', 'chunks'],
  properties: {
    type: { enum: ['paragraph', 'sentence'] },
    value: { type: 'string' },
    start: { type: 'integer' },
    end: { type: 'integer' },
    start_time: { type: 'integer' },
    end_time: { type: 'integer' },
    chunks: { type: 'array', items: { oneOf: [ref('MarkNode'), ref('WordMark')] } },
  },
};

const VOICE: Json = {
  type: 'object',
  required: ['id', 'display_name', 'type', 'gender', 'locale', 'models', 'avatar_image', 'created_at'],
  properties: {
    id: { type: 'string' },
    display_name: { type: 'string' },
    type: { enum: ['shared', 'personal'] },
    gender: { enum: ['male', 'female', 'not_specified'] },
    locale: { type: 'string', examples: ['en-US'] },
    models: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'languages'],
        properties: {
          name: { type: 'string' },
          languages: {
            type: 'array',
            items: { type: 'object', required: ['locale'], properties: { locale: { type: 'string' } } },
          },
        },
      },
    },
    avatar_image: { type: ['string', 'null'], format: 'uri' },
    created_at: { type: 'string', format: 'date-time' },
  },
};

const MODEL: Json = {
  type: 'object',
  required: ['id', 'default', 'routes', 'languages', 'voices', 'streaming', 'speech_marks', 'deprecated'],
  properties: {
    id: { type: 'string' },
    default: { type: 'boolean', description: 'Used when a request omits model.' },
    routes: { type: 'array', items: { enum: ['speech', 'stream', 'stream-with-timestamps', 'dialogue'] } },
    languages: { type: 'array', items: { type: 'string' } },
    voices: {
      oneOf: [{ const: 'all' }, { type: 'array', items: { type: 'string' } }],
      description: '"all" when every voice visible to the caller accepts the model, else the voice ids.',
    },
    streaming: { type: 'boolean' },
    speech_marks: { type: 'boolean' },
    deprecated: { type: 'boolean' },
  },
};

const ERROR: Json = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id'],
      properties: {
        code: { enum: allErrorCodes().map(([code]) => code) },
        message: { type: 'string' },
        request_id: { type: 'string' },
        fields: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'Only for validation_failed: request field path → problem.',
        },
      },
    },
  },
};

function errorResponse(description: string): Json {
  return json(ref('Error'), description);
}

/** Builds the document (plain JSON, no functions); `serverUrl` goes into `servers`. */
export function buildOpenApiDocument(serverUrl = '/'): OpenApiDocument {
  const bearer: Json = [{ bearerAuth: [] }];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chorus speech API',
      version: CURRENT_API_VERSION,
      description:
        'Text and SSML to speech: whole, streamed, and streamed with word timings; model and voice catalogs. ' +
        'Every /v1 call needs `Authorization: Bearer <key>`. Pin the API version with `Tts-Version: YYYY-MM-DD`.',
    },
    servers: [{ url: serverUrl }],
    security: bearer,
    paths: {
      '/v1/audio/speech': {
        post: {
          operationId: 'createSpeech',
          summary: 'Synthesise the whole input; audio as Base64 JSON with the speech-mark tree',
          description: `Scope \`audio\`. Input at most ${INPUT_LIMITS.speech} code points. Default audio_format wav.`,
          parameters: COMMON_PARAMETERS,
          requestBody: synthesisBody('speech'),
          responses: {
            '200': json(ref('SpeechResponse'), 'The audio and its metadata'),
            ...(SYNTHESIS_ERRORS as object),
          },
        },
      },
      '/v1/audio/stream': {
        post: {
          operationId: 'streamSpeech',
          summary: 'Stream raw audio as it is produced (chunked)',
          description:
            `Scope \`audio\`. Input at most ${INPUT_LIMITS.stream} code points. No wav. A failure after the first ` +
            'bytes ends the connection without a trailer.',
          parameters: [...(COMMON_PARAMETERS as Json[]), ACCEPT_PARAMETER],
          requestBody: synthesisBody('stream'),
          responses: {
            '200': {
              description: 'Audio bytes; Content-Type is the selected media type',
              headers: COMMON_HEADERS,
              content: {
                'audio/mpeg': { schema: { type: 'string', format: 'binary' } },
                'audio/ogg': { schema: { type: 'string', format: 'binary' } },
                'audio/aac': { schema: { type: 'string', format: 'binary' } },
                'audio/flac': { schema: { type: 'string', format: 'binary' } },
                'audio/L16': { schema: { type: 'string', format: 'binary' } },
                'audio/basic': { schema: { type: 'string', format: 'binary' } },
                'audio/x-alaw-basic': { schema: { type: 'string', format: 'binary' } },
              },
            },
            ...(SYNTHESIS_ERRORS as object),
          },
        },
      },
      '/v1/audio/stream/with-timestamps': {
        post: {
          operationId: 'streamSpeechWithTimestamps',
          summary: 'Server-Sent Events of Base64 audio chunks and word marks',
          description:
            'Scope `audio`. Models tts-3.0 and tts-3.2 only (others → 400 speech_marks_unsupported). Events: ' +
            '`speech.chunk` {audio?, speech_marks?}, `speech.done` {audio_duration_ms}, `speech.error` {error}. ' +
            'A `: keepalive` comment every 15 s while idle. Ignore unknown event types. The status line waits for the ' +
            "engine's first output: a busy engine still answers 503 JSON.",
          parameters: [...(COMMON_PARAMETERS as Json[]), ACCEPT_PARAMETER],
          requestBody: synthesisBody('stream-with-timestamps'),
          responses: {
            '200': {
              description: 'An event stream',
              headers: {
                ...(COMMON_HEADERS as object),
                'Tts-Audio-Content-Type': {
                  description: 'Media type of the audio inside the events',
                  schema: { type: 'string' },
                },
              },
              content: {
                'text/event-stream': {
                  schema: { type: 'string' },
                  itemSchema: {
                    oneOf: [ref('SpeechChunkEvent'), ref('SpeechDoneEvent'), ref('SpeechErrorEvent')],
                  },
                },
              },
            },
            ...(SYNTHESIS_ERRORS as object),
          },
        },
      },
      '/v1/audio/models': {
        get: {
          operationId: 'listModels',
          summary: 'The model catalog (not paginated)',
          description: `Any valid key. The default model is ${DEFAULT_MODEL_ID}.`,
          parameters: COMMON_PARAMETERS,
          responses: {
            '200': json(ref('ModelCatalog'), 'Synthesis models and, apart, dialogue models'),
            '401': errorRef('Unauthenticated'),
          },
        },
      },
      '/v1/voices': {
        get: {
          operationId: 'listVoices',
          summary: 'Shared voices by display name (bytewise), then the workspace’s personal voices newest first',
          description:
            'Scope `voices`. Filters apply before pagination. Without `limit` the whole list comes in one response; ' +
            `with it (1-${MAX_PAGE_SIZE}; a cursor alone pages by ${DEFAULT_PAGE_SIZE}) continue with next_cursor ` +
            'while has_more is true. Cursors are opaque, stable under inserts and bound to the filters.',
          parameters: [
            ...(COMMON_PARAMETERS as Json[]),
            { name: 'cursor', in: 'query', schema: { type: 'string' } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE } },
            { name: 'type', in: 'query', schema: { enum: ['shared', 'personal'] } },
            {
              name: 'locale',
              in: 'query',
              description: 'BCP-47 range, case-insensitive, whole subtags (`en` matches en-US and en-GB).',
              schema: { type: 'string' },
            },
            { name: 'gender', in: 'query', schema: { enum: ['male', 'female', 'not_specified'] } },
            {
              name: 'model',
              in: 'query',
              description: 'Only voices whose models[] include it.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': json(ref('VoiceList'), 'One page of voices'),
            '400': errorRef('BadRequest'),
            '401': errorRef('Unauthenticated'),
            '403': errorRef('Forbidden'),
          },
        },
      },
      '/v1/voices/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'getVoice',
          summary: 'One shared voice or a personal voice of the caller’s workspace',
          description: 'Scope `voices`. Another workspace’s voice answers exactly like an unknown id (404).',
          parameters: COMMON_PARAMETERS,
          responses: {
            '200': json(ref('Voice'), 'The voice'),
            '401': errorRef('Unauthenticated'),
            '403': errorRef('Forbidden'),
            '404': errorRef('NotFound'),
          },
        },
        delete: {
          operationId: 'deleteVoice',
          summary: 'Delete a personal voice of the caller’s workspace (its consent record is kept)',
          description:
            'Scope `voices:write` and permission content.manage (roles owner, admin, member; service accounts by scope).',
          parameters: COMMON_PARAMETERS,
          responses: {
            '204': { description: 'Deleted', headers: COMMON_HEADERS },
            '401': errorRef('Unauthenticated'),
            '403': errorRef('Forbidden'),
            '404': errorRef('NotFound'),
          },
        },
      },
      '/v1/voices/{id}/sample': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'getVoiceSample',
          summary: 'The stored sample of a personal voice, with its media type',
          description: 'Scope `voices`.',
          parameters: COMMON_PARAMETERS,
          responses: {
            '200': {
              description: 'The sample bytes',
              headers: COMMON_HEADERS,
              content: { 'audio/*': { schema: { type: 'string', format: 'binary' } } },
            },
            '401': errorRef('Unauthenticated'),
            '403': errorRef('Forbidden'),
            '404': errorRef('NotFound'),
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          summary: 'This document',
          security: [],
          responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1 document') },
        },
      },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'Liveness: the process answers',
          security: [],
          responses: { '200': json({ type: 'object' }, '{"status":"ok"}') },
        },
      },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'Readiness: the store answers and the engine is ready',
          security: [],
          responses: {
            '200': json(ref('Readiness'), 'Ready'),
            '503': json(ref('Readiness'), 'Not ready; checks say which part'),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus metrics (text exposition format)',
          security: [],
          responses: { '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: chs_<prefix>_<secret>' },
      },
      headers: {
        'X-Request-ID': {
          description: 'Echo of the request’s X-Request-ID, or a generated id',
          schema: { type: 'string' },
        },
        'Tts-Version': { description: 'The API version the request was served under', schema: { type: 'string' } },
      },
      parameters: {
        TtsVersion: {
          name: 'Tts-Version',
          in: 'header',
          description: `API version date (YYYY-MM-DD). Omitted → ${CURRENT_API_VERSION}; a bad format → 400.`,
          schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
        },
        XRequestId: { name: 'X-Request-ID', in: 'header', schema: { type: 'string', maxLength: 128 } },
      },
      responses: {
        BadRequest: errorResponse(
          'validation_failed (with fields), unsupported_model, unsupported_language or speech_marks_unsupported',
        ),
        Unauthenticated: errorResponse('unauthenticated: missing, unknown or revoked key'),
        Forbidden: errorResponse('forbidden: the key lacks a scope or its role a permission'),
        NotFound: errorResponse('not_found'),
        PayloadTooLarge: errorResponse('payload_too_large'),
        UnsupportedMediaType: errorResponse('unsupported_media_type: body not JSON, or Accept cannot be produced'),
        EngineUnavailable: errorResponse('engine_unavailable: retry after Retry-After seconds'),
      },
      schemas: {
        SpeechRequest: {
          type: 'object',
          additionalProperties: false,
          required: ['input', 'voice_id'],
          properties: {
            input: {
              type: 'string',
              description: 'Plain text, or SSML when it starts with <speak. Limit in code points.',
            },
            voice_id: { type: 'string' },
            audio_format: { enum: ['wav', 'mp3', 'ogg', 'aac', 'flac', 'pcm', 'ulaw', 'alaw'] },
            language: { type: 'string', pattern: '^[a-zA-Z]{2}-[a-zA-Z]{2}$' },
            model: { enum: [...SYNTHESIS_MODELS.map((m) => m.id)], default: DEFAULT_MODEL_ID },
            options: {
              type: 'object',
              additionalProperties: false,
              properties: { loudness_normalization: { type: 'boolean' }, text_normalization: { type: 'boolean' } },
            },
            output_format: {
              enum: listOutputFormats(),
              description: 'codec_sampleRate[_bitrate]; wins over audio_format and Accept; wav_24000 only on /speech.',
            },
          },
        },
        SpeechResponse: {
          type: 'object',
          required: ['audio_data', 'audio_format', 'billable_characters_count', 'speech_marks'],
          properties: {
            audio_data: { type: 'string', contentEncoding: 'base64' },
            audio_format: { type: 'string' },
            billable_characters_count: { type: 'integer', description: 'Code points with SSML tags removed.' },
            speech_marks: ref('MarkNode'),
          },
        },
        WordMark: WORD_MARK,
        MarkNode: MARK_NODE,
        SpeechChunkEvent: {
          type: 'object',
          properties: {
            event: { const: 'speech.chunk' },
            data: {
              type: 'object',
              properties: {
                audio: { type: 'string', contentEncoding: 'base64' },
                speech_marks: { type: 'array', items: ref('WordMark') },
              },
            },
          },
        },
        SpeechDoneEvent: {
          type: 'object',
          properties: {
            event: { const: 'speech.done' },
            data: {
              type: 'object',
              required: ['audio_duration_ms'],
              properties: { audio_duration_ms: { type: 'integer' } },
            },
          },
        },
        SpeechErrorEvent: {
          type: 'object',
          properties: {
            event: { const: 'speech.error' },
            data: {
              type: 'object',
              properties: {
                error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } },
              },
            },
          },
        },
        Voice: VOICE,
        VoiceList: {
          type: 'object',
          required: ['voices', 'has_more', 'next_cursor'],
          properties: {
            voices: { type: 'array', items: ref('Voice') },
            has_more: { type: 'boolean' },
            next_cursor: { type: ['string', 'null'] },
          },
        },
        Model: MODEL,
        ModelCatalog: {
          type: 'object',
          required: ['models', 'dialogue_models'],
          properties: {
            models: { type: 'array', items: ref('Model') },
            dialogue_models: {
              type: 'array',
              items: ref('Model'),
              description: `Multi-speaker models (${DIALOGUE_MODELS.map((m) => m.id).join(', ')}), only for /v1/audio/dialogue.`,
            },
          },
        },
        Readiness: {
          type: 'object',
          properties: {
            status: { enum: ['ready', 'not_ready'] },
            checks: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
        Error: ERROR,
      },
    },
  };
}
