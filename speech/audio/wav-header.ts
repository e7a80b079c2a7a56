// RIFF/WAVE header for mono 16-bit PCM.

/** Size placeholder for a stream whose length is unknown (what ffmpeg writes to a pipe). */
export const UNKNOWN_WAV_SIZE = 0xffffffff;

/** The 44-byte header; `dataBytes` is the PCM payload size, or UNKNOWN_WAV_SIZE for a stream. */
export function wavHeader(sampleRate: number, dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  const riffSize = dataBytes === UNKNOWN_WAV_SIZE ? UNKNOWN_WAV_SIZE : 36 + dataBytes;
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(riffSize, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}
