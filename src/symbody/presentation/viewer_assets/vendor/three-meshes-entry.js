export * from './three-entry.js';
export { LoadingManager } from 'three';
export { STLLoader } from 'three/examples/jsm/loaders/STLLoader.js';
export { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js';
export { ColladaLoader } from 'three/examples/jsm/loaders/ColladaLoader.js';
export { unzlibSync } from 'three/examples/jsm/libs/fflate.module.js';
