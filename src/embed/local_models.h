// The embed room's port for local model files, used by the public models API
// (include/quarry/models.h): building the default static model from GloVe vectors and reading a
// static model folder's description. The static/ adapter implements both; other rooms include
// this header, never static/ itself.
#pragma once

#include "embed/static/glove_import.h"
#include "embed/static/static_model.h"
