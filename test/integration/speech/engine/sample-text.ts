// A ~200-word English passage with the function words espeak is known to skip ("of the", "than a").

export const SAMPLE_TEXT = [
  'The lighthouse stood at the edge of the cliff, watching over the harbour for more than a century.',
  'Every night its lamp turned slowly, throwing long beams across the water so that fishing boats could find their way home.',
  'Storms came from the north in winter, and the keeper climbed the narrow stairs to clean the glass and trim the wick.',
  'He kept a journal of the tide, the wind and the ships that passed, writing in small careful letters by candlelight.',
  "Children from the village visited on Sundays; they asked about shipwrecks, whales and the keeper's old dog.",
  'In 1923 the council replaced the oil lamp with an electric one, yet the keeper stayed until he was seventy-two.',
  'Today the tower is a museum, and visitors read his journal behind glass while gulls circle above the rocks.',
  'Some say that on quiet evenings you can still hear footsteps on the stairs, steady and patient, as if someone is checking the light.',
  'Whether or not that is true, the harbour remains calm, the boats return safely, and the beam still sweeps across the dark sea.',
  'It is a small place, but it holds the memory of the ocean and of the people who listened to it.',
].join(' ');
